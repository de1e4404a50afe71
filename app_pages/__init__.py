"""The Streamlit app's pages (chat, evidence, library) and the parts they share: per-session
state and the kiosk's rules (``state``), the sidebar (``sidebar``) and the source panels
(``sources``). ``app.py`` is the frame that composes them with ``st.navigation``.

Not called ``pages/``: that name turns on Streamlit's legacy auto-discovery of pages.
"""
