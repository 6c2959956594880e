; TSX: ecmascript.scm, typescript.scm and jsx.scm (parsing/grammars.py,
; query_source); nothing of its own.
