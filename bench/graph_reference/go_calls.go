// Command go_calls prints every call site of a Go package tree and the function
// or method go/types resolves it to, as JSON lines. Standard library only, run in
// GOPATH mode (GO111MODULE=off) so that imports are type-checked from source.
//
// Usage: go run go_calls.go ROOT IMPORTPATH
package main

import (
	"encoding/json"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
)

type site struct {
	Path       string `json:"path"`
	Line       int    `json:"line"`
	Column     int    `json:"column"`
	Name       string `json:"name"`
	Shape      string `json:"shape"`
	Target     string `json:"target"`
	TargetLine int    `json:"target_line"`
	TargetName string `json:"target_name"`
}

func main() {
	root, _ := filepath.Abs(os.Args[1])
	importPath := os.Args[2]
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	out := json.NewEncoder(os.Stdout)
	rel := func(file string) string {
		abs, _ := filepath.Abs(file)
		r, err := filepath.Rel(root, abs)
		if err != nil || strings.HasPrefix(r, "..") {
			return ""
		}
		return filepath.ToSlash(r)
	}
	filepath.Walk(root, func(dir string, info os.FileInfo, err error) error {
		if err != nil || !info.IsDir() {
			return nil
		}
		if name := info.Name(); dir != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(dir, 0)
		if err != nil || len(pkg.GoFiles) == 0 {
			return nil
		}
		var files []*ast.File
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
			if err == nil {
				files = append(files, f)
			}
		}
		info2 := &types.Info{
			Defs:       map[*ast.Ident]types.Object{},
			Uses:       map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
		}
		sub, _ := filepath.Rel(root, dir)
		path := importPath
		if sub != "." {
			path = importPath + "/" + filepath.ToSlash(sub)
		}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		conf.Check(path, fset, files, info2)
		for _, f := range files {
			var receivers map[types.Object]bool
			ast.Inspect(f, func(n ast.Node) bool {
				if fn, ok := n.(*ast.FuncDecl); ok {
					receivers = map[types.Object]bool{}
					if fn.Recv != nil {
						for _, field := range fn.Recv.List {
							for _, name := range field.Names {
								if obj := info2.Defs[name]; obj != nil {
									receivers[obj] = true
								}
							}
						}
					}
				}
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				fun := call.Fun
				for {
					switch e := fun.(type) {
					case *ast.ParenExpr:
						fun = e.X
						continue
					case *ast.IndexExpr:
						fun = e.X
						continue
					case *ast.IndexListExpr:
						fun = e.X
						continue
					}
					break
				}
				var ident *ast.Ident
				shape := "f()"
				switch e := fun.(type) {
				case *ast.Ident:
					ident = e
				case *ast.SelectorExpr:
					ident = e.Sel
					shape = "a.b.f()"
					if x, ok := e.X.(*ast.Ident); ok {
						used := info2.Uses[x]
						switch {
						case used == nil:
							shape = "obj.f()"
						case receivers[used]:
							shape = "recv.f()"
						default:
							if _, isPkg := used.(*types.PkgName); isPkg {
								shape = "pkg.F()"
							} else {
								shape = "obj.f()"
							}
						}
					}
				default:
					return true
				}
				fn, ok := info2.Uses[ident].(*types.Func)
				if !ok || !fn.Pos().IsValid() {
					return true
				}
				at := fset.Position(ident.Pos())
				def := fset.Position(fn.Pos())
				target := rel(def.Filename)
				from := rel(at.Filename)
				if target == "" || from == "" || strings.HasSuffix(target, "_test.go") {
					return true
				}
				out.Encode(site{from, at.Line, at.Column - 1, ident.Name, shape, target, def.Line, fn.Name()})
				return true
			})
		}
		return nil
	})
}
