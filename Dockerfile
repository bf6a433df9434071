FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DATA_DIR=/data
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN SECRET_KEY=build python manage.py collectstatic --noinput
EXPOSE 8000
# deploy/serve: Uvicorn, or Daphne with ASGI_SERVER=daphne.
CMD ["sh", "-c", "python manage.py migrate --noinput && exec deploy/serve"]
