package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"parley/model"
	"parley/platform/problem"
	"parley/service/messaging"
)

// Page sizes of GET /sms/opt-outs.
const optOutsDefault, optOutsMax = 50, 200

type optOutsJSON struct {
	OptOuts []messaging.OptOutView `json:"optOuts"`
}

func (s *Server) listOptOuts(c *gin.Context) {
	svc, err := s.messages()
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, offset, err := queryPage(c, optOutsDefault, optOutsMax, "offset")
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	f := messaging.OptOutFilter{Limit: int(limit), Offset: int(offset), Phone: unencodedPlus(c.Query("phone"))}
	out, err := svc.OptOuts(c.Request.Context(), key.AccountID, f)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, optOutsJSON{OptOuts: out})
}

type addOptOutsRequest struct {
	Phones []string `json:"phones"`
	Source *string  `json:"source"`
}

// optOutSources are the sources a client may give the numbers it adds: its
// own (api, the default), or the one an older list recorded.
var optOutSources = []string{model.OptOutAPI, model.OptOutConsole, model.OptOutKeyword, model.OptOutCarrier}

func (s *Server) addOptOuts(c *gin.Context) {
	svc, err := s.messages()
	if err != nil {
		s.fail(c, err)
		return
	}
	var body addOptOutsRequest
	if err := bindJSON(c, &body); err != nil {
		s.fail(c, err)
		return
	}
	source := model.OptOutAPI
	if body.Source != nil {
		source = *body.Source
		known := false
		for _, k := range optOutSources {
			known = known || k == source
		}
		if !known {
			s.fail(c, problem.Invalid("source", "must be one of api, console, keyword, carrier_21610"))
			return
		}
	}
	key, _ := keyFrom(c)
	out, err := svc.AddOptOuts(c.Request.Context(), key.AccountID, body.Phones, source)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusCreated, optOutsJSON{OptOuts: out})
}

func (s *Server) deleteOptOut(c *gin.Context) {
	svc, err := s.messages()
	if err != nil {
		s.fail(c, err)
		return
	}
	key, _ := keyFrom(c)
	ch, err := svc.RemoveOptOut(c.Request.Context(), key.AccountID, c.Param("phone"), model.OptOutAPI)
	if err != nil {
		s.fail(c, err)
		return
	}
	respond(c, http.StatusOK, ch)
}

// unencodedPlus gives back the + of an E.164 number sent unencoded in a
// query string, which decodes it as a space: " 14155550142" is
// "+14155550142".
func unencodedPlus(phone string) string {
	if rest, ok := strings.CutPrefix(phone, " "); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
		return "+" + rest
	}
	return phone
}
