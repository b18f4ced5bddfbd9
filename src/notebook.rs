//! Rich display in Jupyter through evcxr (placeholder).
