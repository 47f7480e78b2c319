from rest_framework.routers import SimpleRouter

from .api import CampaignReadViewSet

# Mounted under api/ beside parasol.api_urls (parasol/urls.py): the routes reading a campaign's
# judgments and exports. Named like parasol.api_urls' routes (api-campaign-judgments, ...).
router = SimpleRouter()
router.register("campaigns", CampaignReadViewSet, basename="api-campaign")

urlpatterns = router.urls
