; Elixir definitions are macro calls: `defmodule Name do ... end`, `def f(x) do`.
; Every clause of a multi-clause function is its own node (see the tests).

; Modules, protocols, implementations.
(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#eq? @_kw "defmodule")) @definition.module
(call
  target: (identifier) @_kw
  (arguments . (alias) @name)
  (#eq? @_kw "defprotocol")) @definition.interface
; `defimpl Proto, for: Type` defines the module Proto.Type.
(call
  target: (identifier) @_kw
  (arguments
    . (alias) @receiver
    (keywords
      (pair key: (keyword) @_for value: (alias) @name)))
  (#eq? @_kw "defimpl")
  (#match? @_for "^for:")) @definition.module
; `defimpl Proto do` inside the module it implements the protocol for.
(call
  target: (identifier) @_kw
  (arguments . (alias) @name .)
  (#eq? @_kw "defimpl")) @definition.module

; Functions and macros: `def f(x)`, `def f`, `def f(x) when guard`.
(call
  target: (identifier) @_kw
  (arguments
    .
    [(call target: (identifier) @name)
     (identifier) @name
     (binary_operator
       left: [(call target: (identifier) @name) (identifier) @name]
       operator: "when")])
  (#any-of? @_kw "def" "defp" "defdelegate")) @definition.function
(call
  target: (identifier) @_kw
  (arguments
    .
    [(call target: (identifier) @name)
     (identifier) @name
     (binary_operator
       left: [(call target: (identifier) @name) (identifier) @name]
       operator: "when")])
  (#any-of? @_kw "defmacro" "defmacrop" "defguard" "defguardp")) @definition.macro

; Inheritance: the protocol an implementation implements, and `@behaviour`.
(call
  target: (identifier) @_kw
  (arguments . (alias) @name @reference.inherits)
  (#eq? @_kw "defimpl"))
(unary_operator
  operator: "@"
  operand: (call
    target: (identifier) @_attr
    (arguments . (alias) @name @reference.inherits))
  (#eq? @_attr "behaviour"))

; Remote calls with parentheses: `Repo.get!(User, id)`, `x |> Repo.insert!()`.
; (`user.name` without parentheses is map field access, not a call.)
(call
  target: (dot right: (identifier) @name)
  (arguments)) @reference.call

; Predicates apply to a whole pattern, not to one branch of an alternation, so
; each branch's predicate uses its own capture name.
; Local calls `f(x)` / `f x`, in every position but a definition head (the first
; argument of def/defp/...) or a side of a `::` typespec, and not the definition
; forms or special forms. Argument types inside `@spec f(integer())` still count.
([
  (source (call target: (identifier) @name) @reference.call)
  (do_block (call target: (identifier) @name) @reference.call)
  (else_block (call target: (identifier) @name) @reference.call)
  (after_block (call target: (identifier) @name) @reference.call)
  (rescue_block (call target: (identifier) @name) @reference.call)
  (catch_block (call target: (identifier) @name) @reference.call)
  (block (call target: (identifier) @name) @reference.call)
  (body (call target: (identifier) @name) @reference.call)
  (pair value: (call target: (identifier) @name) @reference.call)
  (list (call target: (identifier) @name) @reference.call)
  (tuple (call target: (identifier) @name) @reference.call)
  (map_content (call target: (identifier) @name) @reference.call)
  (bitstring (call target: (identifier) @name) @reference.call)
  (interpolation (call target: (identifier) @name) @reference.call)
  (access_call (call target: (identifier) @name) @reference.call)
  (dot left: (call target: (identifier) @name) @reference.call)
  (arguments (_) @_prev . (call target: (identifier) @name) @reference.call)
  (call
    target: (dot)
    (arguments . (call target: (identifier) @name) @reference.call))
  (binary_operator
    operator: _ @_right_of
    right: (call target: (identifier) @name) @reference.call
    (#not-eq? @_right_of "::"))
  (binary_operator
    left: (call target: (identifier) @name) @reference.call
    operator: _ @_left_of
    (#not-match? @_left_of "^(when|::)$"))
  (unary_operator
    operator: _ @_unary
    operand: (call target: (identifier) @name) @reference.call
    (#not-eq? @_unary "@"))
 ]
 (#not-match? @name "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defmodule|defprotocol|defimpl|defstruct|defexception|defoverridable|alias|import|require|use|quote|unquote|unquote_splicing|if|unless|case|cond|with|for|receive|try|fn|super|__MODULE__)$"))
; The first argument of a local call that is not a definition form: `if valid?(x) do`.
(call
  target: (identifier) @_outer
  (arguments . (call target: (identifier) @name) @reference.call)
  (#not-match? @_outer "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate)$"))
; `x |> f` pipes into a local function named without parentheses.
(binary_operator operator: "|>" right: (identifier) @name) @reference.call

; Imports: alias/import/require/use Mod, `alias Mod, as: A`, `alias Mod.{A, B}`.
(call
  target: (identifier) @_kw
  (arguments . (alias) @import.module)
  (#any-of? @_kw "alias" "import" "require" "use")) @import
(call
  target: (identifier) @_kw
  (arguments
    . (alias) @import.module
    (keywords (pair key: (keyword) @_as value: (alias) @import.alias)))
  (#eq? @_kw "alias")
  (#match? @_as "^as:")) @import
(call
  target: (identifier) @_kw
  (arguments
    . (dot left: (alias) @import.module right: (tuple (alias) @import.name)))
  (#any-of? @_kw "alias" "import" "require" "use")) @import
