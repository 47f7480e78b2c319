"""The documentation site's generator: `pages` builds the reference pages from the code and holds the MkDocs hooks
(`mkdocs.yml` loads it by path). Not an app: nothing in Parasol imports it."""
