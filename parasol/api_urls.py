"""One REST API, one root listing every app's endpoints: the apps' viewsets meet here, above all of them."""

from rest_framework.routers import DefaultRouter

from campaigns.api import CampaignViewSet
from generation.api import GenerationRunViewSet

router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="campaign")
router.register("generations", GenerationRunViewSet, basename="generation")

urlpatterns = router.urls
