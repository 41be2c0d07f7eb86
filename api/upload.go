package api

import (
	"github.com/gin-gonic/gin"

	"parley/platform/multipartfile"
	"parley/platform/problem"
)

// receiveUpload streams a multipart body through the one upload reader
// (platform/multipartfile): the file to the object store, the other parts
// small fields named in allowed. The file is required.
func (s *Server) receiveUpload(c *gin.Context, allowed ...string) (*multipartfile.Received, error) {
	up, err := multipartfile.Receive(c.Writer, c.Request, s.objects, s.cfg.MaxUploadSize, allowed...)
	if err == nil && up.File == nil {
		err = problem.Invalid("file", "is required")
	}
	if err != nil {
		s.discard(c, up)
		return nil, err
	}
	return up, nil
}

// discard removes what the upload left behind; used when the request is
// refused after the file arrived.
func (s *Server) discard(c *gin.Context, up *multipartfile.Received) {
	if err := multipartfile.Remove(c.Request.Context(), s.objects, up); err != nil {
		s.entry(c).WithError(err).WithField("object", up.File.Key).Warn("remove refused upload")
	}
}
