from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"

    def ready(self):
        from campaigns.scores import provide_latest_scores
        from campaigns.signals import pairs_created

        from .models import latest_scores
        from .receivers import score_new_pairs

        pairs_created.connect(score_new_pairs, dispatch_uid="scoring-score-new-pairs")
        provide_latest_scores(latest_scores)
