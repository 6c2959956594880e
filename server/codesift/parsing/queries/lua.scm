; Definitions.
; `function f()` and `local function f()`.
(function_declaration name: (identifier) @name) @definition.function
; `function M.f()` / `function a.b.f()`: qualified by the table, M.f. (The
; extractor reports every definition with a receiver as a method.)
(function_declaration
  name: (dot_index_expression table: (_) @receiver field: (identifier) @name)) @definition.function
; `function M:f()`: a method with an implicit self, M.f.
(function_declaration
  name: (method_index_expression table: (_) @receiver method: (identifier) @name)) @definition.method
; `local f = function() end` (the declaration is the wider match and wins).
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @name .)
    (expression_list . value: (function_definition) .))) @definition.function
; `f = function() end`, `M.f = function() end`.
(assignment_statement
  (variable_list
    .
    name: [(identifier) @name
           (dot_index_expression table: (_) @receiver field: (identifier) @name)]
    .)
  (expression_list . value: (function_definition) .)) @definition.function
; `{ f = function() end }` in a table constructor.
(field name: (identifier) @name value: (function_definition)) @definition.function

; Calls: f(), M.f(), obj:m(); `require` is an import.
(function_call
  name: [(identifier) @name
         (dot_index_expression field: (identifier) @name)
         (method_index_expression method: (identifier) @name)]
  (#not-eq? @name "require")) @reference.call

; Imports: require "mod" / require("mod"), with the local it is bound to.
(variable_declaration
  (assignment_statement
    (variable_list . name: (identifier) @import.alias .)
    (expression_list
      .
      value: (function_call
        name: (identifier) @_require
        arguments: (arguments . (string content: (string_content) @import.module)))
      .))
  (#eq? @_require "require")) @import
(function_call
  name: (identifier) @_require
  arguments: (arguments . (string content: (string_content) @import.module))
  (#eq? @_require "require")) @import
