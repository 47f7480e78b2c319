"""Who may open a researcher page, which campaigns they see, and the CSV download they all share."""

from django.contrib.admin.views.decorators import staff_member_required
from django.http import HttpResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404

from .exports import csv_chunks, guarded_chunks, write_csv
from .models import Campaign

# Researchers are staff users; anyone else is sent to the researcher login.
researcher_required = staff_member_required(login_url="login")


def campaign_for(request, slug):
    """The campaign if this researcher may see it; anyone else gets a 404, not a hint it exists."""
    return get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)


def csv_response(frame, filename, comments=()):
    """A CSV download of a DataFrame, opened by `comments` as "# ..." lines when given."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    write_csv(frame, response, comments=comments)
    return response


def csv_stream_response(frames, columns, filename):
    """A CSV download of consecutive DataFrames, written as it is sent: memory stays flat for any number of rows."""
    chunks = guarded_chunks(csv_chunks(frames, columns), filename)
    response = StreamingHttpResponse(chunks, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
