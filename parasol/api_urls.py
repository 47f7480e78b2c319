"""One REST API, one root listing every app's endpoints: the apps' viewsets meet here, above all of them."""

from rest_framework.routers import DefaultRouter

from campaigns.api import CampaignViewSet
from generation.api import GenerationRunViewSet

# The router names each route `<basename>-<action>` (api-campaign-list, api-generation-cancel): the
# `api-` prefix keeps them apart from the apps' page names (`<app>-<verb>-<noun>`).
router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="api-campaign")
router.register("generations", GenerationRunViewSet, basename="api-generation")

urlpatterns = router.urls
