; Definitions: `f() { ... }` and `function f { ... }`.
(function_definition name: (word) @name) @definition.function
; Top-level `readonly NAME=value`.
(program
  (declaration_command
    "readonly"
    (variable_assignment name: (variable_name) @name)) @definition.constant)

; Calls: the command name of every simple command (functions of this file and
; external programs), except shell builtins and keywords-like commands.
(command
  name: (command_name (word) @name)
  (#not-match? @name "^(echo|printf|cd|pwd|pushd|popd|dirs|test|\\[|\\[\\[|true|false|:|exit|return|break|continue|set|unset|shift|shopt|local|export|readonly|declare|typeset|let|eval|exec|read|readarray|mapfile|trap|wait|source|\\.|command|builtin|type|hash|alias|unalias|getopts|ulimit|umask|enable|caller|times|disown|jobs|fg|bg|suspend|logout|complete|compgen|compopt)$")) @reference.call

; Imports: `source file` and `. file`.
(command
  name: (command_name (word) @_source)
  .
  argument: [(word) (string) (raw_string) (concatenation)] @import.module
  (#any-of? @_source "source" ".")) @import
