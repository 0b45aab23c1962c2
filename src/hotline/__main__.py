from hotline.cli import main

raise SystemExit(main())
