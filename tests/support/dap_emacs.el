;;; dap_emacs.el --- Emacs dap-mode, in batch, as an editor of the live session.
;; emacs --batch -l dap_emacs.el TUI_DEBUGGER
;; Attaches through `TUI_DEBUGGER dap', prints the line it shows, steps over
;; once (dap-next), prints the new line, and disconnects. Lines on stdout:
;; "EMACS-FRAME N" for each frame it shows, "EMACS-LEFT" at the end.

(require 'dap-mode)
(setq dap-auto-configure-features nil
      dap-print-io nil
      inhibit-message t)

(defvar tdb-adapter (car command-line-args-left))
(defvar tdb-lines nil "The lines shown, newest first.")

(defun tdb-wait (predicate what)
  (let ((deadline (+ (float-time) 60)))
    (while (not (funcall predicate))
      (when (> (float-time) deadline)
        (princ (format "EMACS-ERROR no %s within 60 s\n" what))
        (kill-emacs 1))
      (accept-process-output nil 0.05))))

(dap-register-debug-provider "tui-debugger" (lambda (conf) conf))
(add-hook 'dap-stack-frame-changed-hook
          (lambda (session)
            (let ((frame (dap--debug-session-active-frame session)))
              (when (and frame (not (equal (gethash "line" frame) (car tdb-lines))))
                (push (gethash "line" frame) tdb-lines)
                (princ (format "EMACS-FRAME %s\n" (gethash "line" frame)))))))

(dap-debug (list :type "tui-debugger" :request "attach" :name "Join the live session"
                 :dap-server-path (list tdb-adapter "dap")))
(tdb-wait (lambda () tdb-lines) "stop shown")
(dap-next (dap--cur-session))
(tdb-wait (lambda () (cdr tdb-lines)) "step shown")
(let ((session (dap--cur-session)) (gone nil))
  (dap--send-message (dap--make-request "disconnect" (list :restart :json-false))
                     (lambda (_result) (setq gone t))
                     session)
  (tdb-wait (lambda () gone) "disconnect answered"))
(princ "EMACS-LEFT\n")
(kill-emacs 0)
