; JSX (JavaScript and TSX; parsing/grammars.py, query_source).
; Rendering a component is calling it: <Foo />, <Foo>...</Foo>, <ns.Foo />
((jsx_self_closing_element name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z]"))
((jsx_opening_element name: (identifier) @name) @reference.call
  (#match? @name "^[A-Z]"))
(jsx_self_closing_element
  name: (member_expression property: (property_identifier) @name)) @reference.call
(jsx_opening_element
  name: (member_expression property: (property_identifier) @name)) @reference.call
