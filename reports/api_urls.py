from rest_framework.routers import SimpleRouter

from .api import CampaignExportViewSet

# Mounted under api/ beside campaigns.api_urls: the export route of a campaign.
router = SimpleRouter()
router.register("campaigns", CampaignExportViewSet, basename="campaign")

urlpatterns = router.urls
