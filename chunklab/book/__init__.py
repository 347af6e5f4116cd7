"""Helpers for the book and the notebooks: figures and widgets (``viz``) and the words of each
edition (``labels``). The library never imports this package.
"""
