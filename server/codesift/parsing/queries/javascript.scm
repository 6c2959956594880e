; JavaScript: ecmascript.scm's patterns (read first), these, then jsx.scm's.

; Classes.
(class_declaration name: (identifier) @name) @definition.class

; module.exports = class Application extends Emitter {...}: a named class expression
; assigned to an export is that class.
(expression_statement
  (assignment_expression
    left: (member_expression)
    right: (class name: (identifier) @name))) @definition.class

; Class fields holding a function.
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method

; Inheritance: class A extends B / extends ns.B
(class_heritage
  [(identifier) @name
   (member_expression property: (property_identifier) @name)]) @reference.inherits
