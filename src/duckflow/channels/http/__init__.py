"""The HTTP channel: a FastAPI app with the session API, SSE streams, webhooks and the web page.

Needs the `[server]` extra (fastapi, uvicorn, sse-starlette); `create_app` lives in `app.py`.
"""
