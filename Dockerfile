# kanawa serve: the SSE agent service (see docs/server.md).
#   docker build -t kanawa .
#   docker run -p 8000:8000 -e KANAWA_API_KEYS=key:tenant kanawa
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /app
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install ".[server,celery,postgres]" && useradd --create-home kanawa
USER kanawa

EXPOSE 8000
# Keys are required when listening beyond loopback: set KANAWA_API_KEYS or KANAWA_API_KEYS_FILE.
# Agents: pass module:attr as the command's argument (default: the demo agents).
ENTRYPOINT ["kanawa", "serve", "--host", "0.0.0.0", "--port", "8000"]
