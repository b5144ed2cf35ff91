"""The HTTP channel: a FastAPI app with the session API, SSE streams, webhooks and the web page.

Needs the `[server]` extra (fastapi, uvicorn); `create_app` lives in `app.py`. SSE frames are
written by `sse.py` (sse-starlette's response runs a task group per stream; measured with
`duckflow bench server`, the lean response holds 500 live streams at a lower cost).
"""
