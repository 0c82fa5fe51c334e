"""Stubs for tokkit._native.text: the compiled GPT-2 scanner and BERT kernels.

They have no Python-level names: other kernels `cimport` them (see text.pxd), and Python code
reaches them through tokkit._native.text_api.
"""
