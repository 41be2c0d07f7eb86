package docs

import (
	"encoding/json"
	"errors"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Handlers hand services the request's context, never the *gin.Context:
// gin reuses a Context for the next request as soon as the handler returns,
// while goroutines the call started (database/sql's, for one) may still
// read it. TestSMSTwoWayTrafficOnOneThread under -race found such a race;
// this names every call that could bring it back.
func TestNoGinContextAsContext(t *testing.T) {
	for _, pkg := range []string{"parley/api", "parley/console"} {
		for _, at := range ginContextsPassedAsContext(t, pkg) {
			t.Errorf("%s passes a *gin.Context as a context.Context: pass c.Request.Context()", at)
		}
	}
}

// ginContextsPassedAsContext type-checks pkg's non-test files against its
// dependencies' export data (go list -export) and returns the position of
// every *gin.Context argument to a context.Context parameter.
func ginContextsPassedAsContext(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-json", pkg).Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", pkg, err)
	}
	exports := map[string]string{}
	var dir string
	var files []string
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath, Dir, Export string
			GoFiles                 []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.ImportPath == pkg {
			dir, files = p.Dir, p.GoFiles
		}
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, f := range files {
		file, err := parser.ParseFile(fset, filepath.Join(dir, f), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, file)
	}
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if exports[path] == "" {
			return nil, errors.New("no export data for " + path)
		}
		return os.Open(exports[path])
	})
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}}
	if _, err := (&types.Config{Importer: imp}).Check(pkg, fset, parsed, info); err != nil {
		t.Fatalf("type-check %s: %v", pkg, err)
	}
	var found []string
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sig, ok := info.Types[call.Fun].Type.(*types.Signature)
			if !ok {
				return true
			}
			for i, arg := range call.Args {
				if i >= sig.Params().Len() || (sig.Variadic() && i >= sig.Params().Len()-1) {
					break
				}
				if sig.Params().At(i).Type().String() != "context.Context" {
					continue
				}
				if at := info.Types[arg].Type; at != nil && at.String() == "*github.com/gin-gonic/gin.Context" {
					found = append(found, fset.Position(arg.Pos()).String())
				}
			}
			return true
		})
	}
	return found
}
