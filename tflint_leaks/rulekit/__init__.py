"""What rules are written against: :mod:`.rule` (``Rule``, ``Valid``, ``Invalid``),
:mod:`.context` (the ``FileContext`` a rule's hooks read, ``Report``, ``InsertStatement``) and
:mod:`.options`. This package imports neither the engine nor the configuration; nothing is
re-exported here, so that importing the options does not import libcst."""
