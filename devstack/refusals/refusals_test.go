package refusals

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"parley/platform/i18n"
	"parley/platform/problem"
)

// declaredErrors reads the error types (a type with an Error() string
// method) and error variables (declared as error, made by errors.New or
// fmt.Errorf, or named Err...) that the packages under dirs export, as
// package.Name.
func declaredErrors(t *testing.T, dirs ...string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			pkg := f.Name.Name
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if name, ok := errorMethodOf(d); ok && ast.IsExported(name) {
						found[pkg+"."+name] = true
					}
				case *ast.GenDecl:
					if d.Tok != token.VAR {
						continue
					}
					for _, spec := range d.Specs {
						vs := spec.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if n.IsExported() && isErrorVar(n.Name, vs, i) {
								found[pkg+"."+n.Name] = true
							}
						}
					}
				}
			}
		}
	}
	return found
}

// errorMethodOf is the receiver type of an Error() string method.
func errorMethodOf(d *ast.FuncDecl) (string, bool) {
	if d.Recv == nil || d.Name.Name != "Error" || d.Type.Params.NumFields() != 0 || d.Type.Results.NumFields() != 1 {
		return "", false
	}
	if res, ok := d.Type.Results.List[0].Type.(*ast.Ident); !ok || res.Name != "string" {
		return "", false
	}
	recv := d.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	id, ok := recv.(*ast.Ident)
	if !ok {
		return "", false
	}
	return id.Name, true
}

func isErrorVar(name string, vs *ast.ValueSpec, i int) bool {
	if id, ok := vs.Type.(*ast.Ident); ok && id.Name == "error" {
		return true
	}
	if strings.HasPrefix(name, "Err") {
		return true
	}
	if i < len(vs.Values) {
		if call, ok := vs.Values[i].(*ast.CallExpr); ok {
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
				if pkg, ok := sel.X.(*ast.Ident); ok {
					return (pkg.Name == "errors" && sel.Sel.Name == "New") || (pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
				}
			}
		}
	}
	return false
}

// The list is the source's: every error model/ and service/ declare has a
// row, and every row of theirs is still declared.
func TestDeclaredIsComplete(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := []string{filepath.Join(root, "model")}
	services, err := os.ReadDir(filepath.Join(root, "service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range services {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join(root, "service", e.Name()))
		}
	}
	found := declaredErrors(t, dirs...)
	if len(found) < 8 {
		t.Fatalf("found only %v in %v: the scan is broken", found, dirs)
	}
	rows := map[string]bool{}
	for _, r := range Declared() {
		rows[r.Name] = true
	}
	for name := range found {
		if !rows[name] {
			t.Errorf("%s is an error the services may return, and Declared has no row saying what a client is told of it", name)
		}
	}
	scanned := map[string]bool{}
	for _, d := range dirs {
		scanned[filepath.Base(d)] = true
	}
	for name := range rows {
		if pkg, _, _ := strings.Cut(name, "."); scanned[pkg] && !found[name] {
			t.Errorf("Declared has a row for %s, which the source no longer declares", name)
		}
	}
}

// Every row is what problem.Of makes of it, with a message whose
// parameters are all filled; what is told as INTERNAL_ERROR says why.
func TestOfTellsEveryRow(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range All() {
		if seen[r.Name] {
			t.Errorf("two rows named %s", r.Name)
		}
		seen[r.Name] = true
		p := problem.Of(r.Err, DatabaseDown)
		if p.Code != r.Code || p.Status() != r.Status {
			t.Errorf("%s: Of gives %s %d, want %s %d", r.Name, p.Code, p.Status(), r.Code, r.Status)
		}
		if r.Code == problem.Internal && r.Why == "" {
			t.Errorf("%s is told as INTERNAL_ERROR without saying why", r.Name)
		}
		if p.Cause == nil && !slices.Contains(problem.Codes(), r.Name) {
			t.Errorf("%s: Of keeps no cause for the logs", r.Name)
		}
	}
	for _, r := range Declared() {
		for _, lang := range []string{"en", "he", "ar"} {
			p := problem.Of(r.Err, DatabaseDown)
			if msg := catalog.Message(p.Code, p.Params, lang); strings.Contains(msg, "<no value>") || msg == p.Code {
				t.Errorf("%s in %s reads %q", r.Name, lang, msg)
			}
		}
	}
}
