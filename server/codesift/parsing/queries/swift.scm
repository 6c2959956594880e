; Swift. class/struct/enum/actor share `class_declaration`, told apart by
; `declaration_kind`; an `extension` is a scope that qualifies its members with
; the extended type. Properties are left out.

(class_declaration declaration_kind: "class" name: (type_identifier) @name) @definition.class
(class_declaration declaration_kind: "actor" name: (type_identifier) @name) @definition.class
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(protocol_declaration name: (type_identifier) @name) @definition.interface
(typealias_declaration name: (type_identifier) @name) @definition.type

(function_declaration name: (simple_identifier) @name) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.constructor
; Operator functions (`static func < (lhs:rhs:)`), subscripts, deinit and a
; protocol's associated types.
((function_declaration name: _ @name) @definition.function
  (#match? @name "^[^A-Za-z_`]"))
(subscript_declaration "subscript" @name) @definition.method
(deinit_declaration "deinit" @name) @definition.method
(associatedtype_declaration name: (type_identifier) @name) @definition.type

; `extension Foo`, `extension Outer.Foo<Int>`: qualify members with the last type name.
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name .)) @scope
(class_declaration
  declaration_kind: "extension"
  name: (user_type (type_identifier) @name . (type_arguments) .)) @scope

; Inheritance clause: superclass and adopted protocols (last component of
; `Swift.Equatable`, generic arguments dropped). On an extension the clause sits
; in a scope, which the extractor cannot attribute yet.
(inheritance_specifier
  inherits_from: (user_type (type_identifier) @name .)) @reference.inherits
(inheritance_specifier
  inherits_from: (user_type (type_identifier) @name . (type_arguments) .)) @reference.inherits

; Calls: f(x), Type(x), obj.m(x), a.b.m(x), f { trailing closure }. Subscripts
; (`counts[key]`) also parse as call_expression; their arguments open with `[`.
(call_expression
  . (simple_identifier) @name
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.call
(call_expression
  . (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @name))
  . (call_suffix [(value_arguments "(") (lambda_literal)])) @reference.call

; import Foundation / import struct Swift.Array
(import_declaration (identifier) @import.module) @import
