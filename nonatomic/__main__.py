from nonatomic.cli import main

main()
