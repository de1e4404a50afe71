from policybot.cli import main

main()
