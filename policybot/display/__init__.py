"""What a person is shown, with no UI toolkit in it: document text escaped for Markdown, page
images with the quote highlighted, exports, and the kiosk's admin gate."""
