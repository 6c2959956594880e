; Definitions. A decorated definition is captured whole so its span starts at
; the first decorator; the plain pattern below matches the same name and the
; wider match wins.
(decorated_definition
  definition: (function_definition name: (identifier) @name)) @definition.function
(decorated_definition
  definition: (class_definition name: (identifier) @name)) @definition.class
(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class

; Base classes (a generic one, `Base[T]`, by its name).
(class_definition
  superclasses: (argument_list
    [(identifier) @name
     (attribute attribute: (identifier) @name)] @reference.inherits))
(class_definition
  superclasses: (argument_list
    (subscript
      value: [(identifier) @name
              (attribute attribute: (identifier) @name)]) @reference.inherits))

; Calls: f(), obj.f(), pkg.mod.f()
(call function: (identifier) @name) @reference.call
(call function: (attribute attribute: (identifier) @name)) @reference.call
; A bare decorator (@name, @pkg.name) calls the decorator where the definition is
; made: in the enclosing scope (the extractor attributes decorators there).
(decorator (identifier) @name) @reference.call
(decorator (attribute attribute: (identifier) @name)) @reference.call

; Imports.
(import_statement name: (dotted_name) @import.module) @import
(import_statement
  name: (aliased_import name: (dotted_name) @import.module alias: (identifier) @import.alias)) @import
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (dotted_name) @import.name) @import
(import_from_statement
  module_name: [(dotted_name) (relative_import)] @import.module
  name: (aliased_import name: (dotted_name) @import.name alias: (identifier) @import.alias)) @import
