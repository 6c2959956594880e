; TypeScript: ecmascript.scm's patterns (read first), then these (TSX: then
; jsx.scm's). The extractor also climbs `ambient_declaration` for a JSDoc comment.

; Classes, interfaces, enums, type aliases; overload signatures and `declare
; function` (.d.ts files).
(function_signature name: (identifier) @name) @definition.function
(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(type_alias_declaration name: (type_identifier) @name) @definition.type

; namespace A.B { }  /  module M { }  /  declare module 'pkg' { }
; A statement-level namespace sits in an expression_statement: capture that so
; the comment above it is its doc (the wider match wins).
(internal_module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(expression_statement
  (internal_module name: [(identifier) (nested_identifier)] @name)) @definition.namespace
(module name: [(identifier) (nested_identifier)] @name) @definition.namespace
(module name: (string (string_fragment) @name)) @definition.namespace

; module.exports = class Application {...}: a named class expression assigned to
; an export is that class.
(expression_statement
  (assignment_expression
    left: (member_expression)
    right: (class name: (type_identifier) @name))) @definition.class

; Class and interface members beyond ecmascript.scm's methods.
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method
; Signatures in interfaces and `declare class` bodies (not in inline object types).
(interface_body
  (method_signature name: (property_identifier) @name) @definition.method)
(class_body
  (method_signature name: (property_identifier) @name) @definition.method)
(abstract_method_signature name: (property_identifier) @name) @definition.method

; Inheritance: extends / implements / interface extends.
(extends_clause
  value: [(identifier) @name
          (member_expression property: (property_identifier) @name)]) @reference.inherits
(implements_clause
  [(type_identifier) @name
   (nested_type_identifier name: (type_identifier) @name)
   (generic_type name: [(type_identifier) @name
                        (nested_type_identifier name: (type_identifier) @name)])]) @reference.inherits
(extends_type_clause
  type: [(type_identifier) @name
         (nested_type_identifier name: (type_identifier) @name)
         (generic_type name: [(type_identifier) @name
                              (nested_type_identifier name: (type_identifier) @name)])]) @reference.inherits

; import fs = require('fs')
(import_statement
  (import_require_clause
    (identifier) @import.alias
    source: (string (string_fragment) @import.module))) @import

; Decorators: `@sealed` calls sealed (`@Component({...})` is a call already); the
; enclosing scope makes the call (parsing/calls.py).
(decorator (identifier) @name) @reference.call
(decorator (member_expression property: (property_identifier) @name)) @reference.call
