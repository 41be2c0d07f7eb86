package console

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/devstack/refusals"
	"parley/platform/i18n"
	"parley/platform/problem"
)

type downDatabase struct{}

func (downDatabase) Unavailable(err error) bool { return refusals.DatabaseDown(err) }

// Every error the services return reaches the console's script with the
// API's status and code (api's TestFailAnswersEveryRefusal holds the API
// to the same list) and the API's message in the person's language, and
// its page shows that message under the same status.
func TestFailProblemAnswersAsTheAPI(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	con, err := New(Deps{BaseURL: "https://parley.example", Catalog: catalog, Database: downDatabase{}, Log: logrus.New()})
	if err != nil {
		t.Fatal(err)
	}
	all := refusals.All()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/fail/:i", func(g *gin.Context) {
		i, _ := strconv.Atoi(g.Param("i"))
		con.failProblem(g, all[i].Err)
	})
	for i, ref := range all {
		for _, lang := range []string{"en", "he", "ar"} {
			p := problem.Of(ref.Err, refusals.DatabaseDown)
			want := catalog.Message(p.Code, p.Params, lang)

			req := httptest.NewRequest(http.MethodGet, "/fail/"+strconv.Itoa(i), nil)
			req.Header.Set("Accept-Language", lang)
			req.Header.Set("Accept", "application/json")
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			var body struct{ Error, Code string }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("%s: body %s", ref.Name, w.Body)
			}
			if w.Code != ref.Status || body.Code != ref.Code || body.Error != want {
				t.Errorf("%s in %s, script: %d %s %q, want %d %s %q", ref.Name, lang, w.Code, body.Code, body.Error, ref.Status, ref.Code, want)
			}

			req = httptest.NewRequest(http.MethodGet, "/fail/"+strconv.Itoa(i), nil)
			req.Header.Set("Accept-Language", lang)
			w = httptest.NewRecorder()
			r.ServeHTTP(w, req)
			page := w.Body.String()
			if w.Code != ref.Status || !strings.Contains(page, template.HTMLEscapeString(want)) || !strings.Contains(page, `lang="`+lang+`"`) {
				t.Errorf("%s in %s, page: %d, want %d with %q", ref.Name, lang, w.Code, ref.Status, want)
			}
		}
	}
}
