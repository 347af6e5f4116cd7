"""The named corpora: installed code, fetched wheels and archives, the kit's documents, PDFs."""
