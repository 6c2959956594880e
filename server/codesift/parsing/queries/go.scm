; Go. Qualified names are prefixed with the package clause (`http.Server.Handle`).
; Top-level const/var blocks are left out on purpose: they are numerous and noisy.

(package_clause (package_identifier) @package)

; Functions and methods. A method's receiver type (without `*` or type
; arguments) becomes its qualifier and, when the type is in this file, its parent.
(function_declaration name: (identifier) @name) @definition.function

(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @definition.function

; Type specs. A declaration holding a single spec is captured whole so that the
; doc comment above `type X ...` attaches; specs inside a `type ( ... )` group
; are captured on their own (the wider match wins when both apply).
(type_declaration . (type_spec name: (type_identifier) @name type: (struct_type)) .) @definition.struct
(type_declaration . (type_spec name: (type_identifier) @name type: (interface_type)) .) @definition.interface
(type_declaration . (type_spec name: (type_identifier) @name type: [
  (type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type)
  (array_type) (map_type) (channel_type) (function_type)
]) .) @definition.type
(type_declaration . (type_alias name: (type_identifier) @name) .) @definition.type

(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: [
  (type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type)
  (array_type) (map_type) (channel_type) (function_type)
]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type

; Interface methods become methods of the interface.
(method_elem name: (field_identifier) @name) @definition.function

; Embedding: an embedded interface or struct field is recorded as inherits.
(interface_type
  (type_elem . [
    (type_identifier) @name
    (qualified_type name: (type_identifier) @name)
  ] .) @reference.inherits)
(field_declaration_list
  (field_declaration
    !name
    type: [
      (type_identifier) @name
      (qualified_type name: (type_identifier) @name)
      (generic_type type: (type_identifier) @name)
    ]) @reference.inherits)

; Calls: f(), obj.m(), pkg.F(), and generic calls with explicit type
; arguments, which the grammar parses as conversions to a generic type.
(call_expression function: (identifier) @name) @reference.call
(call_expression function: (selector_expression field: (field_identifier) @name)) @reference.call
(type_conversion_expression
  type: (generic_type type: [
    (type_identifier) @name
    (qualified_type name: (type_identifier) @name)
  ])) @reference.call

; Imports: `import "net/http"`, `import nh "net/http"` (`_` and `.` are kept as aliases).
(import_spec
  name: [(package_identifier) (blank_identifier) (dot)]? @import.alias
  path: (interpreted_string_literal) @import.module) @import
