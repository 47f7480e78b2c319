from rest_framework.routers import SimpleRouter

from .api import CampaignReadViewSet

# Mounted under api/ beside campaigns.api_urls: the routes reading a campaign's judgments and exports.
router = SimpleRouter()
router.register("campaigns", CampaignReadViewSet, basename="campaign")

urlpatterns = router.urls
