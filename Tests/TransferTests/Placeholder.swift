// Placeholder so the package builds while these tests are written; remove when adding real files.
