; Kotlin. Qualified names are prefixed with the package: com.example.Foo.bar.

(package_header (identifier) @package)

; Types. `class_declaration` covers class, interface and enum class; the
; keyword tells them apart. A class pattern must not also match an enum class
; (same node, same width: the first match would win), so the class patterns
; require the last named child to be something an enum class never ends with.
(class_declaration "interface" (type_identifier) @name) @definition.interface
(class_declaration "enum" (type_identifier) @name) @definition.enum
(class_declaration "class" (type_identifier) @name .) @definition.class
(class_declaration
  "class"
  (type_identifier) @name
  [(type_parameters) (primary_constructor) (delegation_specifier) (type_constraints)
   (class_body)] .) @definition.class
(object_declaration (type_identifier) @name) @definition.class
(companion_object (type_identifier) @name) @definition.class
(type_alias (type_identifier) @name) @definition.type

; Top-level properties: `val appModule = module { ... }` (Koin's modules, DSL
; builders and constants are written so), `val Foo.ext: Int get() = ...`. Class
; members are fields and stay part of their class's lines.
(source_file
  (property_declaration
    (binding_pattern_kind "val")
    (variable_declaration (simple_identifier) @name)) @definition.constant)
(source_file
  (property_declaration
    (binding_pattern_kind "var")
    (variable_declaration (simple_identifier) @name)) @definition.variable)

; Functions (methods when inside a class, object or interface).
; Extension functions (`fun Module.singleOf(...)`) keep the package qualifier only:
; qualified by their receiver (`Retrofit.create`) they tie with the member they wrap
; (retrofit's `inline fun <reified T> Retrofit.create()` outranked `Retrofit.create`).
(function_declaration (simple_identifier) @name) @definition.function
(secondary_constructor "constructor" @name) @definition.constructor

; Inheritance: class A : Base(), Iface, pkg.Other<T>, Delegated by impl
; A user_type's last type_identifier is the type's own name.
(delegation_specifier
  [(user_type (type_identifier) @name .)
   (user_type (type_identifier) @name . (type_arguments))
   (constructor_invocation (user_type (type_identifier) @name .))
   (constructor_invocation (user_type (type_identifier) @name . (type_arguments)))
   (explicit_delegation (user_type (type_identifier) @name .))
   (explicit_delegation (user_type (type_identifier) @name . (type_arguments)))]) @reference.inherits

; Calls: f(), obj.f(), Foo() (constructor calls look like function calls).
(call_expression (simple_identifier) @name) @reference.call
(call_expression
  (navigation_expression (navigation_suffix (simple_identifier) @name))) @reference.call

; Imports: import a.b.C; import a.b.C as D; import a.b.*
(import_header (identifier) @import.module .) @import
(import_header (identifier) @import.module (wildcard_import)) @import
(import_header
  (identifier) @import.module
  (import_alias (type_identifier) @import.alias)) @import
