from django.apps import AppConfig


class ScoringConfig(AppConfig):
    name = "scoring"

    def ready(self):
        from campaigns.signals import pairs_created

        from .receivers import score_new_pairs

        pairs_created.connect(score_new_pairs, dispatch_uid="scoring-score-new-pairs")
