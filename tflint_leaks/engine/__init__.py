"""Discovery, parsing, the rule walk, suppressions, caching and the parallel runner."""
