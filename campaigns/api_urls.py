from rest_framework.routers import DefaultRouter

from .api import CampaignViewSet
from .generation_api import GenerationRunViewSet

router = DefaultRouter()
router.register("campaigns", CampaignViewSet, basename="campaign")
router.register("generations", GenerationRunViewSet, basename="generation")

urlpatterns = router.urls
