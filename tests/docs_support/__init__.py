"""Running the code blocks of the documentation pages (see tests/test_docs_examples.py for the contract)."""
