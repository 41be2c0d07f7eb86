package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/sirupsen/logrus"

	"parley/devstack/refusals"
	"parley/platform/i18n"
	"parley/platform/problem"
)

// downDatabase says the refusals' stand-in database error is one of a
// database that could not serve.
type downDatabase struct{}

func (downDatabase) Health(context.Context) error { return nil }
func (downDatabase) Unavailable(err error) bool   { return refusals.DatabaseDown(err) }

// Every error the services return leaves the API with the code and status
// the refusals list gives it, the message in the caller's language (the
// console's TestFailProblemAnswersAsTheAPI holds the console to the same
// list).
func TestFailAnswersEveryRefusal(t *testing.T) {
	catalog, err := i18n.Load()
	if err != nil {
		t.Fatal(err)
	}
	s := NewServer(Deps{Catalog: catalog, Database: downDatabase{}, Log: logrus.New()})
	all := refusals.All()
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.GET("/fail/:i", func(c *gin.Context) {
		i, _ := strconv.Atoi(c.Param("i"))
		s.fail(c, all[i].Err)
	})
	for i, ref := range all {
		for _, lang := range []string{"en", "he", "ar"} {
			req := httptest.NewRequest(http.MethodGet, "/fail/"+strconv.Itoa(i), nil)
			req.Header.Set("Accept-Language", lang)
			w := httptest.NewRecorder()
			r.ServeHTTP(w, req)
			var env envelope
			if err := json.Unmarshal(w.Body.Bytes(), &env); err != nil || env.Error == nil {
				t.Fatalf("%s: body %s", ref.Name, w.Body)
			}
			p := problem.Of(ref.Err, refusals.DatabaseDown)
			if w.Code != ref.Status || env.Error.Code != ref.Code || env.Error.Message != catalog.Message(p.Code, p.Params, lang) {
				t.Errorf("%s in %s: %d %s %q, want %d %s %q", ref.Name, lang, w.Code, env.Error.Code, env.Error.Message,
					ref.Status, ref.Code, catalog.Message(p.Code, p.Params, lang))
			}
		}
	}
}
