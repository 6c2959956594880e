; Definitions. `class Outer::Inner` qualifies Inner by the scope it names.
(module name: (constant) @name) @definition.module
(module
  name: (scope_resolution scope: (_) @receiver name: (constant) @name)) @definition.module
(class name: (constant) @name) @definition.class
(class
  name: (scope_resolution scope: (_) @receiver name: (constant) @name)) @definition.class
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(assignment left: (constant) @name) @definition.constant

; Inheritance: `class A < B`, and mixins `include M` / `extend M` / `prepend M`.
(class
  superclass: (superclass [(constant) (scope_resolution)] @name) @reference.inherits)
(call
  !receiver
  method: (identifier) @_mixin
  arguments: (argument_list [(constant) (scope_resolution)] @name) @reference.inherits
  (#any-of? @_mixin "include" "extend" "prepend"))

; Calls: `obj.m(...)`, `m(...)`, `Integer(x)`. Forms that only declare something
; (require, mixins, attribute macros, visibility) are not calls. tree-sitter 0.26
; ignores `#not-any-of?`, so exclusions are anchored `#not-match?` regexes.
(call
  method: [(identifier) (constant)] @name
  (#not-match? @name "^(require|require_relative|load|include|extend|prepend|attr_reader|attr_writer|attr_accessor|private|protected|public|module_function|private_constant|public_constant|new)$")) @reference.call
; `Klass.new(...)` calls the class (its initialize), so the callee is the class.
(call
  receiver: [(constant) (scope_resolution)] @name
  method: (identifier) @_new
  (#eq? @_new "new")) @reference.call
; A bare identifier standing as a statement is a method call without arguments
; (`log_settlement`); it can also be a local variable returned as the last value.
(body_statement
  (identifier) @name @reference.call
  (#not-match? @name "^(private|protected|public|module_function)$"))

; Imports: require "json", require_relative "lib/x".
(call
  !receiver
  method: (identifier) @_require
  arguments: (argument_list . (string (string_content) @import.module))
  (#any-of? @_require "require" "require_relative" "load")) @import
