from django.urls import path

from . import reports

urlpatterns = [
    path("campaigns/<slug:slug>/report/", reports.show_report, name="campaigns-show-report"),
    path("reports/", reports.show_cross_report, name="campaigns-show-cross-report"),
    path("reports/tables/<str:name>.csv", reports.download_report_table, name="campaigns-download-report-table"),
    path("reports/figures/<str:name>.<str:fmt>", reports.show_report_figure, name="campaigns-show-report-figure"),
]
