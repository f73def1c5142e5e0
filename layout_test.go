package agentstream_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The guards in this file walk the whole module: every directory holding Go
// files, but testdata folders (not packages of the module), hidden ones and
// nested modules. A new package is covered without a list to update.

const module = "github.com/agentstream/agentstream"

// goFile is one parsed Go file of the module.
type goFile struct {
	name string // slash-separated, relative to the module root
	test bool   // a _test.go file
	ast  *ast.File
}

// goPackage is one directory of the module with Go files in it.
type goPackage struct {
	dir   string // slash-separated, relative to the module root; "." is the root
	path  string // import path
	name  string // package name of its non-test files (or of its tests)
	files []goFile
}

// packages parses every Go file of the module, with comments.
func packages(t *testing.T) (*token.FileSet, []goPackage) {
	t.Helper()
	fset := token.NewFileSet()
	byDir := map[string]*goPackage{}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := d.Name()
			if p != "." && (base == "testdata" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(p, "go.mod")); p != "." && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		pkg := byDir[dir]
		if pkg == nil {
			pkg = &goPackage{dir: dir, path: path.Join(module, dir)}
			byDir[dir] = pkg
		}
		test := strings.HasSuffix(p, "_test.go")
		if !test || pkg.name == "" {
			pkg.name = f.Name.Name
		}
		pkg.files = append(pkg.files, goFile{name: filepath.ToSlash(p), test: test, ast: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []goPackage
	for _, p := range byDir {
		pkgs = append(pkgs, *p)
	}
	slices.SortFunc(pkgs, func(a, b goPackage) int { return strings.Compare(a.dir, b.dir) })
	if len(pkgs) < 10 {
		t.Fatalf("found only %d packages in the module", len(pkgs))
	}
	return fset, pkgs
}

// requires reads the modules go.mod requires, longest first.
func requires(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mods []string
	block := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "require (":
			block = true
		case block && line == ")":
			block = false
		case block && line != "" && !strings.HasPrefix(line, "//"):
			mods = append(mods, strings.Fields(line)[0])
		case strings.HasPrefix(line, "require "):
			mods = append(mods, strings.Fields(line)[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(mods, func(a, b string) int { return len(b) - len(a) })
	return mods
}

// std reports whether an import path is in the standard library.
func std(p string) bool { return !strings.Contains(strings.Split(p, "/")[0], ".") }

// within reports whether p is the package base or one below it.
func within(p, base string) bool { return p == base || strings.HasPrefix(p, base+"/") }

// TestImports keeps the architecture, over every package of the module
// (non-test files; tests may import what they need):
//
//   - the root package imports only the standard library and the JSON
//     scanner, which imports only the standard library;
//   - a dialect package under adapter/ imports only the root, the scanner
//     and adapter/internal/...; the adapter package itself may also import
//     the dialects; adapter/internal/filediff alone also imports the diff
//     library;
//   - the store interface imports only the root and the scanner;
//   - each outside module is imported by one package only, and a package
//     wrapping one is wired only by cmd/, but for adapter/internal/filediff
//     (the diff library), which the adapters use;
//   - internal/demo and internal/workload, the floor above everything, are
//     imported only by cmd/ (and tests);
//   - only the conformance suites, agentstreamtest and store/storetest,
//     import testing outside tests, and only tests import them.
func TestImports(t *testing.T) {
	fset, pkgs := packages(t)
	mods := requires(t)
	moduleOf := func(imp string) string {
		for _, m := range mods {
			if within(imp, m) {
				return m
			}
		}
		return imp
	}
	const (
		jsonscan = module + "/internal/jsonscan"
		adapters = module + "/adapter"
		inner    = module + "/adapter/internal"
		diffLib  = "github.com/aymanbagabas/go-udiff"
	)
	dialect := func(p string) bool {
		return std(p) || p == module || p == jsonscan || within(p, inner)
	}
	rules := []struct {
		name    string
		applies func(pkg string) bool
		allowed func(imp string) bool
	}{
		{"the root imports the standard library and the scanner only",
			func(p string) bool { return p == module }, func(i string) bool { return std(i) || i == jsonscan }},
		{"the scanner imports the standard library only",
			func(p string) bool { return p == jsonscan }, std},
		{"the adapter registry imports the root, the scanner and the dialects only",
			func(p string) bool { return p == adapters }, func(i string) bool { return dialect(i) || within(i, adapters) }},
		{"an adapter imports the root, the scanner and adapter/internal only",
			func(p string) bool { return within(p, adapters) && p != adapters && p != inner+"/filediff" }, dialect},
		{"adapter/internal/filediff imports the root and the diff library only",
			func(p string) bool { return p == inner+"/filediff" }, func(i string) bool { return dialect(i) || within(i, diffLib) }},
		{"the store interface imports the root and the scanner only",
			func(p string) bool { return p == module+"/store" }, func(i string) bool { return std(i) || i == module || i == jsonscan }},
		{"only the conformance suites import testing outside tests",
			func(p string) bool { return p != module+"/agentstreamtest" && p != module+"/store/storetest" },
			func(i string) bool { return !within(i, "testing") }},
		{"internal/demo and internal/workload are imported by cmd/ only",
			func(p string) bool { return !within(p, module+"/cmd") },
			func(i string) bool {
				return !within(i, module+"/internal/demo") && !within(i, module+"/internal/workload")
			}},
		{"only tests import agentstreamtest",
			func(p string) bool { return p != module+"/agentstreamtest" }, func(i string) bool { return !within(i, module+"/agentstreamtest") }},
		{"only tests import store/storetest",
			func(p string) bool { return p != module+"/store/storetest" }, func(i string) bool { return !within(i, module+"/store/storetest") }},
	}
	importers := map[string][]string{} // outside module → packages importing it
	wrappers := map[string]string{}    // package → the outside module it wraps
	type use struct {
		pkg, imp string
		pos      token.Position
	}
	var uses []use
	for _, pkg := range pkgs {
		seen := map[string]bool{}
		for _, f := range pkg.files {
			if f.test {
				continue
			}
			for _, spec := range f.ast.Imports {
				imp, err := strconv.Unquote(spec.Path.Value)
				if err != nil {
					t.Fatal(err)
				}
				uses = append(uses, use{pkg.path, imp, fset.Position(spec.Pos())})
				if m := moduleOf(imp); !std(imp) && !within(imp, module) && !seen[m] {
					seen[m] = true
					importers[m] = append(importers[m], pkg.path)
					wrappers[pkg.path] = m
				}
			}
		}
	}
	for _, u := range uses {
		for _, r := range rules {
			if r.applies(u.pkg) && !r.allowed(u.imp) {
				t.Errorf("%s: %s imports %s: %s", u.pos, u.pkg, u.imp, r.name)
			}
		}
		if m, ok := wrappers[u.imp]; ok && !within(u.pkg, module+"/cmd") && !(u.imp == inner+"/filediff" && within(u.pkg, adapters)) {
			t.Errorf("%s: %s imports %s, which wraps %s: only cmd/ wires a dependency's package", u.pos, u.pkg, u.imp, m)
		}
	}
	for m, ps := range importers {
		if len(ps) > 1 {
			t.Errorf("%s is imported by %d packages (%s): one package per outside dependency", m, len(ps), strings.Join(ps, ", "))
		}
	}
}

// systemDirs are where a test may find what the system provides (a shell,
// /proc, a temporary directory, an installed program).
var systemDirs = []string{"/bin", "/dev", "/etc", "/lib", "/proc", "/sbin", "/sys", "/tmp", "/usr"}

// TestTestPathsStayInModule fails on a path in test code that leaves the
// module, so that a clone of the repository alone passes its tests. It reads
// every test file, and every file of a package whose name ends in "test",
// for string constants (literals, sums of constants, filepath.Join and
// path.Join of constants) whose words are paths: a relative one with a ".."
// element, resolved from the file's directory, must stay inside the module;
// an absolute one must not name an existing file outside the module but in
// the system's own directories. A string that only looks like a path says so
// with a "not a path" comment on its line.
func TestTestPathsStayInModule(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	fset, pkgs := packages(t)
	checked := 0
	for _, pkg := range pkgs {
		consts := map[string]ast.Expr{}
		for _, f := range pkg.files {
			for _, d := range f.ast.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
					for _, s := range g.Specs {
						vs := s.(*ast.ValueSpec)
						for i, n := range vs.Names {
							if i < len(vs.Values) {
								consts[n.Name] = vs.Values[i]
							}
						}
					}
				}
			}
		}
		dir := filepath.Join(root, filepath.FromSlash(pkg.dir))
		for _, f := range pkg.files {
			if !f.test && !strings.HasSuffix(pkg.name, "test") {
				continue
			}
			checked++
			notPath := map[int]bool{}
			for _, cg := range f.ast.Comments {
				for _, c := range cg.List {
					if strings.Contains(c.Text, "not a path") {
						notPath[fset.Position(c.Pos()).Line] = true
					}
				}
			}
			ast.Inspect(f.ast, func(n ast.Node) bool {
				e, ok := n.(ast.Expr)
				if !ok {
					return true
				}
				s, ok := constString(e, consts, 0)
				if !ok {
					return true
				}
				pos := fset.Position(e.Pos())
				if notPath[pos.Line] {
					return false
				}
				for _, word := range strings.Fields(s) {
					if where, out := leaves(root, dir, word); out {
						t.Errorf("%s: %q leaves the module (%s): keep the file under testdata/ in the repository", pos, word, where)
					}
				}
				return false
			})
		}
	}
	if checked < 20 {
		t.Fatalf("checked only %d test files", checked)
	}
}

// leaves reports whether word, a path read by code in dir, names a place
// outside the module at root, and which.
func leaves(root, dir, word string) (string, bool) {
	if filepath.IsAbs(word) {
		p := filepath.Clean(word)
		if p == "/" || inside(root, p) || slices.ContainsFunc(systemDirs, func(d string) bool { return p == d || strings.HasPrefix(p, d+"/") }) {
			return "", false
		}
		if m, _ := filepath.Glob(p); len(m) == 0 {
			return "", false // data that looks like a path: nothing is there
		}
		return p, true
	}
	if !slices.Contains(strings.Split(filepath.ToSlash(word), "/"), "..") { // not a path
		return "", false
	}
	p := filepath.Join(dir, word)
	return p, !inside(root, p)
}

// inside reports whether p is root or below it.
func inside(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") // not a path
}

// constString evaluates e when it is a string constant: a literal, a
// package-level constant, a sum of them, or filepath.Join or path.Join of
// them.
func constString(e ast.Expr, consts map[string]ast.Expr, depth int) (string, bool) {
	if depth > 20 {
		return "", false
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.ParenExpr:
		return constString(e.X, consts, depth+1)
	case *ast.Ident:
		if v, ok := consts[e.Name]; ok {
			return constString(v, consts, depth+1)
		}
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			x, ok1 := constString(e.X, consts, depth+1)
			y, ok2 := constString(e.Y, consts, depth+1)
			return x + y, ok1 && ok2
		}
	case *ast.CallExpr:
		sel, ok := e.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Join" {
			return "", false
		}
		if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "filepath" && pkg.Name != "path" || e.Ellipsis.IsValid() {
			return "", false
		}
		var parts []string
		for _, a := range e.Args {
			s, ok := constString(a, consts, depth+1)
			if !ok {
				return "", false
			}
			parts = append(parts, s)
		}
		return path.Join(parts...), true
	}
	return "", false
}
