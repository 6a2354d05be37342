"""Reference controllers written in Python: each gives the same run, byte for byte, as acclab's
Rust controller of the same name (python/tests/test_controllers.py checks it)."""
