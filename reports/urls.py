from django.urls import path

from . import active_views, detector_views, views

# Report pages and the CSV exports. Their paths sit under campaigns/ (links and bookmarks use the
# paths); their names are this app's (`reports-<verb>-<noun>`).
urlpatterns = [
    path("campaigns/<slug:slug>/report/", views.show_report, name="reports-show-report"),
    path("reports/", views.show_cross_report, name="reports-show-cross-report"),
    path("reports/tables/<str:name>.csv", views.download_report_table, name="reports-download-report-table"),
    path("reports/tables/<str:name>.tex", views.download_report_table_latex, name="reports-download-report-latex"),
    path("reports/report.html", views.download_report_html, name="reports-download-report-html"),
    path("reports/figures/<str:name>.<str:fmt>", views.show_report_figure, name="reports-show-report-figure"),
    path("campaigns/<slug:slug>/export/pairs.csv", views.export_pairs, name="reports-export-pairs"),
    path("campaigns/<slug:slug>/export/signatures.txt", views.export_signatures, name="reports-export-signatures"),
    path("campaigns/<slug:slug>/export/judgments.csv", views.export_judgments, name="reports-export-judgments"),
    path("campaigns/<slug:slug>/report/<str:name>.csv", views.download_task_table, name="reports-download-task-table"),
    path("campaigns/<slug:slug>/export/taggings.jsonl", views.export_taggings, name="reports-export-taggings"),
    path("campaigns/<slug:slug>/active-choice/", active_views.show_active_choice, name="reports-show-active-choice"),
    path("campaigns/<slug:slug>/active-choice/draw/", active_views.draw_wave, name="reports-draw-active-choice"),
    path("campaigns/<slug:slug>/detector/", detector_views.show_detector, name="reports-show-detector"),
    path("campaigns/<slug:slug>/detector/train/", detector_views.train_detector, name="reports-train-detector"),
]
