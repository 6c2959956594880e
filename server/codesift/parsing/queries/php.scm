; The namespace the file declares (`namespace App\Orders;` or the braced form).
(namespace_definition name: (namespace_name) @package)

; Definitions.
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration
  name: (name) @name
  (#eq? @name "__construct")) @definition.constructor
(method_declaration
  name: (name) @name
  (#not-eq? @name "__construct")) @definition.method
(const_element (name) @name) @definition.constant
(enum_case name: (name) @name) @definition.constant

; Inheritance: extends, implements, and traits used inside a class body.
(class_declaration
  (base_clause [(name) (qualified_name)] @name @reference.inherits))
(class_declaration
  (class_interface_clause [(name) (qualified_name)] @name @reference.inherits))
(interface_declaration
  (base_clause [(name) (qualified_name)] @name @reference.inherits))
(enum_declaration
  (class_interface_clause [(name) (qualified_name)] @name @reference.inherits))
(use_declaration [(name) (qualified_name)] @name @reference.inherits)

; Calls: f(), \ns\f(), $o->m(), $o?->m(), Cls::m(), new Cls().
(function_call_expression function: [(name) (qualified_name)] @name) @reference.call
(member_call_expression name: (name) @name) @reference.call
(nullsafe_member_call_expression name: (name) @name) @reference.call
(scoped_call_expression name: (name) @name) @reference.call
(object_creation_expression [(name) (qualified_name)] @name) @reference.call

; Imports: `use A\B\C;`, `use A\B\C as D;`, `use function A\f;`, grouped
; `use A\{B, C as D};`, and require/include of a literal path.
(namespace_use_declaration
  (namespace_use_clause
    .
    [(qualified_name) (name)] @import.module
    alias: (name)? @import.alias)) @import
(namespace_use_declaration
  (namespace_name) @import.module
  body: (namespace_use_group
    (namespace_use_clause
      .
      [(qualified_name) (name)] @import.name
      alias: (name)? @import.alias))) @import
[(require_expression [(string (string_content) @import.module)
                       (binary_expression right: (string (string_content) @import.module))])
 (require_once_expression [(string (string_content) @import.module)
                            (binary_expression right: (string (string_content) @import.module))])
 (include_expression [(string (string_content) @import.module)
                       (binary_expression right: (string (string_content) @import.module))])
 (include_once_expression [(string (string_content) @import.module)
                            (binary_expression right: (string (string_content) @import.module))])
] @import
