package console

import (
	"github.com/gin-gonic/gin"

	"parley/platform/multipartfile"
	"parley/service/jobs"
)

// The fields of the job forms besides the file: the CSRF token (a form
// without the script posts it as a field), the job's options and, for
// subtitles, the style's parts.
var (
	transcribeFields = []string{csrfField, "url", "language", "email_after", "sms_after"}
	subtitleFields   = []string{csrfField, "language", "email_after", "sms_after", "use_voice_cleanup",
		"font", "fontSize", "primaryColor", "outlineColor", "position", "marginV"}
)

// form is a job form read by the one upload reader (platform/multipartfile),
// under the API's rules; its file, if any, went to the object store as it
// arrived, and the job service owns it once it is given it.
type form struct {
	fields map[string]string
	upload *jobs.Upload
	got    *multipartfile.Received
}

// readForm streams a multipart job form whose fields are named in allowed.
func (c *Console) readForm(g *gin.Context, allowed []string) (form, error) {
	got, err := multipartfile.Receive(g.Writer, g.Request, c.d.Uploads, c.d.MaxUploadSize, allowed...)
	f := form{got: got}
	if err != nil {
		c.discard(g, f)
		return f, err
	}
	f.fields = got.Fields
	if got.File != nil {
		upload := jobs.UploadOf(got.File)
		f.upload = &upload
	}
	return f, nil
}

// discard removes the file of a form that was refused after it arrived.
func (c *Console) discard(g *gin.Context, f form) {
	if err := multipartfile.Remove(g.Request.Context(), c.d.Uploads, f.got); err != nil {
		c.d.Log.WithError(err).WithField("object", f.got.File.Key).Warn("remove refused upload")
	}
}
