from django.urls import path

from . import detector_views, views

# Report pages and the CSV exports; the names keep their `campaigns-` prefix, as links and bookmarks use them.
urlpatterns = [
    path("campaigns/<slug:slug>/report/", views.show_report, name="campaigns-show-report"),
    path("reports/", views.show_cross_report, name="campaigns-show-cross-report"),
    path("reports/tables/<str:name>.csv", views.download_report_table, name="campaigns-download-report-table"),
    path("reports/tables/<str:name>.tex", views.download_report_table_latex, name="campaigns-download-report-latex"),
    path("reports/report.html", views.download_report_html, name="campaigns-download-report-html"),
    path("reports/figures/<str:name>.<str:fmt>", views.show_report_figure, name="campaigns-show-report-figure"),
    path("campaigns/<slug:slug>/export/pairs.csv", views.export_pairs, name="campaigns-export-pairs"),
    path("campaigns/<slug:slug>/export/signatures.txt", views.export_signatures, name="campaigns-export-signatures"),
    path("campaigns/<slug:slug>/export/judgments.csv", views.export_judgments, name="campaigns-export-judgments"),
    path(
        "campaigns/<slug:slug>/report/<str:name>.csv", views.download_span_table, name="campaigns-download-span-table"
    ),
    path("campaigns/<slug:slug>/export/taggings.jsonl", views.export_taggings, name="campaigns-export-taggings"),
    path("campaigns/<slug:slug>/detector/", detector_views.show_detector, name="campaigns-show-detector"),
    path("campaigns/<slug:slug>/detector/train/", detector_views.train_detector, name="campaigns-train-detector"),
]
