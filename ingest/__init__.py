"""Getting articles in: feeds, pages, text extraction, canonical URLs."""
